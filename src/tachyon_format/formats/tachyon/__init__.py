"""Tachyon: the binary files of CPython 3.15's sampling profiler."""
