"""Read, write, validate and convert CPython 3.15 Tachyon sampling-profiler files.

>>> import tachyon_format
>>> facts = tachyon_format.info("profile.bin")           # header-level, O(1)
>>> profile = tachyon_format.read("profile.bin")         # the whole profile as numpy columns
>>> for batch in tachyon_format.iter_batches("huge.bin", samples_per_batch=1_000_000):
...     ...                                              # bounded memory
>>> tachyon_format.write(profile, "copy.bin")            # byte-identical to CPython's writer
>>> tachyon_format.convert("profile.bin", "profile.pb.gz")  # any format to any other

Re-exports only: the verbs live in ``_api``, the model in ``model``, the formats in
``formats``. The model (numpy), the schemas (construct), the writer class and the decoders
load on first use, so that importing the package stays light.
"""

from typing import TYPE_CHECKING

from ._api import convert, info, iter_batches, output_format, read, sniff, validate, write
from ._lazy import lazy_attributes
from .errors import FormatError
from .formats import FORMATS, Format
from .problems import Problem

if TYPE_CHECKING:
    from .formats.tachyon.region.engines import decoder_info
    from .formats.tachyon.writer import Writer
    from .model import (
        Frames,
        Mappings,
        Meta,
        Profile,
        Samples,
        Stacks,
        Strings,
        Threads,
        ThreadStatus,
        ValueType,
    )
    from .schema.opcodes import base_opcode, base_opcode_name, opcode_name

__all__ = [
    "FORMATS",
    "Format",
    "FormatError",
    "Frames",
    "Mappings",
    "Meta",
    "Problem",
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
    "decoder_info",
    "base_opcode_name",
    "info",
    "iter_batches",
    "opcode_name",
    "output_format",
    "read",
    "sniff",
    "validate",
    "write",
]
__version__ = "0.1.0"


_LAZY = {
    **dict.fromkeys(("Frames", "Mappings", "Meta", "Profile", "Samples", "Stacks", "Strings",
                     "Threads", "ValueType"), "model"),
    "ThreadStatus": "model.thread_status",
    **dict.fromkeys(("base_opcode", "base_opcode_name", "opcode_name"), "schema.opcodes"),
    "Writer": "formats.tachyon.writer",
    "decoder_info": "formats.tachyon.region.engines",
}
"""Names whose modules need numpy or construct: they load on first use, so that ``import
tachyon_format`` (and the command line's ``--help``) costs a few milliseconds."""

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
