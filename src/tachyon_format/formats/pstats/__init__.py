"""pstats files: the marshal'd statistics dict of Python's ``profile``/``cProfile`` modules,
as CPython 3.15's sampling profiler writes it (``replay --pstats -o``), and its text report.

Only :func:`sniff` is here, light to import; the registry (:mod:`tachyon_format.formats`)
names the modules of the other verbs, loaded on first use.
"""

from __future__ import annotations

_DICT = frozenset((0x7B, 0xFB))  # marshal TYPE_DICT, without and with FLAG_REF
_TUPLE = frozenset((0x28, 0x29, 0xA8, 0xA9))  # TYPE_TUPLE, TYPE_SMALL_TUPLE (+ FLAG_REF)


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) the start of a pstats file: a marshal'd dict
    whose first key is a tuple (a function, or CPython 3.15's ``("__sampled__",)`` marker)?"""
    return len(head) >= 2 and head[0] in _DICT and head[1] in _TUPLE
