"""Analysis on any :class:`~tachyon_format.Profile`, whatever format it was read from.

* :mod:`.functions`: self and cumulative counts per function, file and function, line or
  opcode (per thread or status too), the top functions, callers and callees;
* :mod:`.slicing`: a profile restricted to a time window, threads, interpreters, status bits,
  or to the samples whose stack has (or has not) a frame matching a pattern;
* :mod:`.merge`: several profiles as one (e.g. the per-process files of ``--subprocesses``);
* :mod:`.diff`: two profiles compared per function or per stack;
* :mod:`.anonymize`: file paths trimmed before a profile is shared;
* :mod:`.threads`: per thread, its samples and the share of each status (GIL held, waited
  for, on CPU ...).

Results are small :class:`Table` s (numpy columns, one row per distinct key) or new
profiles that every writer writes. Every function works per distinct stack (numpy over the
stack tree), never with a Python object per sample.
"""

from . import slicing
from .anonymize import anonymize, anonymize_path
from .diff import DiffError, diff, diff_stacks
from .functions import callees, callers, function_table, neighbours, top
from .keys import FIELDS, GROUPINGS, frame_keys
from .merge import MergeError, merge, merge_files
from .table import Table
from .threads import thread_table

__all__ = [
    "DiffError",
    "FIELDS",
    "MergeError",
    "GROUPINGS",
    "Table",
    "anonymize",
    "anonymize_path",
    "callees",
    "callers",
    "diff",
    "diff_stacks",
    "frame_keys",
    "function_table",
    "merge",
    "merge_files",
    "neighbours",
    "thread_table",
    "slicing",
    "top",
]
