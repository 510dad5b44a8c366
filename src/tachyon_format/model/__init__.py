"""The format-neutral profile: numpy columns, one stack prefix tree, strings kept as bytes.

The columns' types load on first use (numpy with them): what needs only the meaning of the
``status`` column, :class:`ThreadStatus` (the Tachyon schema's spec page, the command line's
status filters), loads no numpy.
"""

from typing import TYPE_CHECKING

from .thread_status import ThreadStatus

if TYPE_CHECKING:
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

_LAZY = {
    **dict.fromkeys(("SAMPLES_COUNT", "Frames", "Mappings", "Meta", "Profile", "Samples",
                     "Threads", "ValueType"), "profile"),
    **dict.fromkeys(("Stacks", "StackTuples"), "stacks"),
    "Strings": "strings",
}
"""Names whose modules need numpy, by module."""


def __getattr__(name: str):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
