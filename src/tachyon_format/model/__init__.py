"""The format-neutral profile: numpy columns, one stack prefix tree, strings kept as bytes.

The columns' types load on first use (numpy with them): what needs only the meaning of the
``status`` column, :class:`ThreadStatus` (the Tachyon schema's spec page, the command line's
status filters), loads no numpy.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes
from .thread_status import ThreadStatus

if TYPE_CHECKING:
    from .profile import (
        NS_PER_UNIT,
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

__all__ = [
    "NS_PER_UNIT",
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

_LAZY = {
    **dict.fromkeys(("NS_PER_UNIT", "SAMPLES_COUNT", "Frames", "Mappings", "Meta", "Profile",
                     "Samples", "Threads", "ValueType"), "profile"),
    **dict.fromkeys(("Stacks", "StackTuples"), "stacks"),
    "Strings": "strings",
}
"""Names whose modules need numpy, by module."""

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
