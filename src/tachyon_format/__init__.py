"""Read, write, validate and convert CPython 3.15 Tachyon sampling-profiler files.

>>> import tachyon_format
>>> facts = tachyon_format.info("profile.bin")           # header-level, O(1)
>>> profile = tachyon_format.read("profile.bin")         # the whole profile as numpy columns
>>> for batch in tachyon_format.iter_batches("huge.bin", samples_per_batch=1_000_000):
...     ...                                              # bounded memory
>>> tachyon_format.write(profile, "copy.bin")            # byte-identical to CPython's writer
"""

from .errors import FormatError
from .formats.tachyon.file import info
from .formats.tachyon.writer import CsrStacks, PrefixTreeStacks, Writer, write
from .model import Frames, Profile, Records, Samples, Stacks, Threads

__all__ = [
    "CsrStacks",
    "FormatError",
    "Frames",
    "PrefixTreeStacks",
    "Profile",
    "Records",
    "Samples",
    "Stacks",
    "Threads",
    "Writer",
    "info",
    "iter_batches",
    "read",
    "validate",
    "write",
]
__version__ = "0.1.0"


def __getattr__(name: str):
    # the sample decoder (numpy kernels) loads on first use, so `info` stays light
    if name in ("read", "iter_batches"):
        from .formats.tachyon import reader

        return getattr(reader, name)
    if name == "validate":
        from .formats.tachyon.validate import validate

        return validate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
