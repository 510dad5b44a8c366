"""What the model's ``status`` column means: the status bits of a sample.

Every format with thread states stores them as these bits (a Tachyon file's status byte, the
labels of a pprof file written from one, a Gecko or Chrome trace's markers), so they belong to
the model, not to one format's schema; the Tachyon schema imports them to document its byte.
Only :mod:`enum` here: the construct-free fast readers and the command line's filters load
nothing heavier for it.
"""

from __future__ import annotations

import enum


class ThreadStatus(enum.IntFlag):
    """The status byte of a sample (``_remote_debugging.THREAD_STATUS_*``); bits 6-7 unused."""

    HAS_GIL = 1 << 0
    ON_CPU = 1 << 1
    UNKNOWN = 1 << 2
    GIL_REQUESTED = 1 << 3
    HAS_EXCEPTION = 1 << 4
    MAIN_THREAD = 1 << 5
