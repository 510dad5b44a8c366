"""Read, write, validate and convert CPython 3.15 Tachyon sampling-profiler files.

>>> import tachyon_format
>>> facts = tachyon_format.info("profile.bin")           # header-level, O(1)
>>> profile = tachyon_format.read("profile.bin")         # the whole profile as numpy columns
>>> for batch in tachyon_format.iter_batches("huge.bin", samples_per_batch=1_000_000):
...     ...                                              # bounded memory
>>> tachyon_format.write(profile, "copy.bin")            # byte-identical to CPython's writer
>>> tachyon_format.convert("profile.bin", "profile.pb.gz")  # any format to any other

Re-exports only: the verbs live in ``_api``, the model in ``model``, the formats in
``formats``. The writer class and the decoders load on first use, so that importing the
package stays light.
"""

from ._api import convert, info, iter_batches, read, sniff, validate, write
from .errors import FormatError
from .formats import FORMATS, Format
from .model import (
    Frames,
    Mappings,
    Meta,
    Profile,
    Samples,
    Stacks,
    Strings,
    Threads,
    ValueType,
)
from .schema.opcodes import base_opcode, base_opcode_name, opcode_name
from .schema.tachyon import ThreadStatus

__all__ = [
    "FORMATS",
    "Format",
    "FormatError",
    "Frames",
    "Mappings",
    "Meta",
    "Profile",
    "Samples",
    "Stacks",
    "Strings",
    "ThreadStatus",
    "Threads",
    "ValueType",
    "Writer",
    "convert",
    "base_opcode",
    "base_opcode_name",
    "info",
    "iter_batches",
    "opcode_name",
    "read",
    "sniff",
    "validate",
    "write",
]
__version__ = "0.1.0"


def __getattr__(name: str):
    # the streaming Tachyon writer (and with it zstd) loads on first use
    if name == "Writer":
        from .formats.tachyon.writer import Writer

        return Writer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
