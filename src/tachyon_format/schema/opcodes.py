"""Names of the opcodes in Tachyon frames: CPython 3.15 numbers, on any Python >= 3.11.

A frame's ``opcode`` is a CPython **3.15** opcode number, so the running interpreter's ``dis``
names it wrongly before 3.15 (163 is ``CALL_NON_PY_GENERAL`` in 3.15 but ``SET_UPDATE`` in
3.11). The table lives in ``opcodes_315.py``, generated from the reference interpreter by
``tools/gen_opcodes.py`` and checked against it in the tests. This module adds the file's
"not captured" sentinel and the family lookup; the table is kept apart so that regenerating it
never touches hand-written code, and a 3.16 table can sit beside it.

What CPython 3.15.2's profiler stores (``Modules/_remote_debugging/``): ``parse_frame_buffer``
(``frames.c``) hands the frame's ``instr_ptr`` to ``parse_code_object`` (``code_objects.c``),
which, when opcodes are requested, reads the 16-bit code unit there from the target process
and keeps ``word & 0xFF``, the opcode byte on a little-endian target. That is the raw byte of
``co_code_adaptive`` (or of the thread's bytecode copy in a free-threaded build); nothing maps
it through ``_PyOpcode_Deopt``. So a file holds what the interpreter was about to execute:
**specialized** instructions (``LOAD_ATTR_INSTANCE_VALUE``, ``BINARY_OP_ADD_INT``), instrumented
ones while ``sys.monitoring`` is active (``INSTRUMENTED_CALL``), and ``ENTER_EXECUTOR`` where
the JIT has replaced an instruction (its original is kept in the executor, not recoverable
here). ``build_frame_stack`` (``binary_io_writer.c``) keeps 0..254 (``MAX_REAL_OPCODE``) and
writes 255 for None or anything else, so 3.15's ``TRACE_RECORD`` (255) can never be told apart
from "not captured". The golden file ``tests/data/threads_cpu_opcodes_raw.bin`` shows
specialized numbers. Group by ``base_opcode`` to count a family together.

Unassigned numbers are named ``"<n>"``, as 3.15's own ``dis.opname`` and
``profiling.sampling``'s ``opcode_utils`` name them, so ``opcode_name(n)`` equals
``dis.opname[n]`` of CPython 3.15 for every ``n`` in 0..254.
"""

from __future__ import annotations

import operator

from .opcodes_315 import BASE_OPCODES, OPNAMES, PYTHON_VERSION
from .tachyon import OPCODE_NONE

__all__ = ["BASE_OPCODES", "NOT_CAPTURED", "OPNAMES", "PYTHON_VERSION", "base_opcode",
           "base_opcode_name", "opcode_name"]

NOT_CAPTURED = (-1, OPCODE_NONE)
"""No opcode for the frame: -1 in ``Profile.frames.opcode``, 255 in the file."""


def _checked(number: int) -> int:
    """*number* as a plain int (numpy integers too), which must be -1..255."""
    number = operator.index(number)
    if not -1 <= number < len(OPNAMES):
        raise ValueError(f"opcode {number} is outside 0..255 (-1: not captured)")
    return number


def opcode_name(number: int | None) -> str | None:
    """CPython 3.15's name of a frame's opcode; None if not captured (None, -1, 255).

    Specialized and instrumented numbers get their own names (``LOAD_ATTR_INSTANCE_VALUE``);
    numbers 3.15 leaves unassigned get ``"<n>"``.
    """
    if number is None:
        return None
    number = _checked(number)
    if number in NOT_CAPTURED:
        return None
    return OPNAMES[number] or f"<{number}>"


def base_opcode(number: int) -> int:
    """The unspecialized, uninstrumented opcode of *number*'s family; *number* otherwise.

    ``LOAD_ATTR_INSTANCE_VALUE`` and ``INSTRUMENTED_CALL`` give ``LOAD_ATTR`` and ``CALL``.
    ``ENTER_EXECUTOR``, ``INSTRUMENTED_LINE`` and ``INSTRUMENTED_INSTRUCTION`` stay themselves,
    since the instruction they stand for is not in the file. -1 and 255 are returned unchanged.
    """
    number = _checked(number)
    return BASE_OPCODES.get(number, number)


def base_opcode_name(number: int | None) -> str | None:
    """``opcode_name(base_opcode(number))``: the family's name; None if not captured."""
    return None if number is None else opcode_name(base_opcode(number))
