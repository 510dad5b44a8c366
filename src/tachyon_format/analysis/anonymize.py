"""File paths trimmed before a profile is shared: home directories, the prefix of
``site-packages``, any prefix given, or everything but the base name.

Only strings that name files (frames' ``filename``, mappings' ``filename``) change; the
rules work on the bytes, so the rest of a path (and every other string: function names,
build ids) keeps its exact bytes, invalid UTF-8 included. A string that names a file and is
also used as something else is left in place and the file gets a new string; otherwise it
is rewritten in place, so the original path is gone from the string table. Other facts that
may hold paths (``extras``, e.g. pprof comments or a merge's source names) are dropped
unless ``keep_extras=True``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from tachyon_format.model import Profile, Strings

SITE_PACKAGES = re.compile(rb"^.*?[/\\](?:site|dist)-packages(?=[/\\])")
"""Everything up to a ``site-packages`` (or Debian's ``dist-packages``) directory."""
HOME = re.compile(rb"^(?:/home/[^/]+|/Users/[^/]+|/root|[A-Za-z]:\\Users\\[^\\]+)(?=[/\\]|$)")
"""A home directory: ``/home/<user>``, ``/Users/<user>``, ``/root``, ``C:\\Users\\<user>``."""


def anonymize_path(path: bytes, *, home: bool = True, site_packages: bool = True,
                   prefixes: Iterable[tuple[str, str]] = (), basename: bool = False) -> bytes:
    """One path with the rules applied: *prefixes* (``(old, new)`` pairs, first match wins)
    first, then ``<site-packages>``, then ``~`` for a home directory; *basename* keeps only
    the last component."""
    for old, new in prefixes:
        old_bytes = old.encode("utf-8", "surrogateescape")
        if path.startswith(old_bytes):
            path = new.encode("utf-8", "surrogateescape") + path[len(old_bytes):]
            break
    if site_packages:
        path = SITE_PACKAGES.sub(b"<site-packages>", path, count=1)
    if home:
        path = HOME.sub(b"~", path, count=1)
    if basename:
        path = re.split(rb"[/\\]", path)[-1]
    return path


def anonymize(profile: Profile, *, home: bool = True, site_packages: bool = True,
              prefixes: Iterable[tuple[str, str]] = (), basename: bool = False,
              keep_extras: bool = False) -> Profile:
    """*profile* with its file paths trimmed (see :func:`anonymize_path` and the module
    docstring); samples, stacks and every other column are shared, not copied."""
    prefixes = list(prefixes)
    raws = profile.strings.raws()
    n = len(raws)
    frames, mappings = profile.frames, profile.mappings
    file_rows = [frames.filename.astype(np.int64), mappings.filename.astype(np.int64)]
    other_rows = [frames.funcname.astype(np.int64), mappings.build_id.astype(np.int64)]
    is_file = np.zeros(n + 1, bool)
    is_other = np.zeros(n + 1, bool)
    for rows in file_rows:
        is_file[np.minimum(rows, n)] = True
    for rows in other_rows:
        is_other[np.minimum(rows, n)] = True
    new_raws = list(raws)
    moved: dict[int, int] = {}  # a shared string's row -> the row of its trimmed copy
    for index in np.flatnonzero(is_file[:n]).tolist():
        trimmed = anonymize_path(raws[index], home=home, site_packages=site_packages,
                                 prefixes=prefixes, basename=basename)
        if trimmed == raws[index]:
            continue
        if is_other[index]:
            moved[index] = len(new_raws)
            new_raws.append(trimmed)
        else:
            new_raws[index] = trimmed
    remap = np.arange(n + 1, dtype=np.int64)
    for old, new in moved.items():
        remap[old] = new

    def moved_rows(rows: np.ndarray) -> np.ndarray:
        inside = rows < n  # (an index past the table stays as it is)
        return np.where(inside, remap[np.minimum(rows, n)], rows).astype(np.uint32)

    new_frames = replace(frames, filename=moved_rows(file_rows[0]))
    new_mappings = replace(mappings, filename=moved_rows(file_rows[1]))
    return replace(profile, strings=Strings.from_raw(new_raws), frames=new_frames,
                   mappings=new_mappings, extras=dict(profile.extras) if keep_extras else {})
