"""pprof's ``profile.CheckValid`` and the decoder's own checks, on the columns.

Checked (google/pprof ``profile/profile.go`` ``CheckValid`` and ``encode.go``
``postDecode``): ``string_table[0] == ""`` and every string index inside the table;
mapping, location and function ids nonzero and unique; every sample location id and every
nonzero line function id names an entry; each sample has one value per sample type (and
there are sample types if there are samples); ``memory_start <= memory_limit``. A mapping
id that names no mapping is read as none, as pprof does. Failures raise
:class:`~tachyon_format.FormatError` with the field path (``Profile -> sample -> 12 ->
location_id -> 3``) and the byte offset in the decompressed message where known.
"""

from __future__ import annotations

import numpy as np

from .wire import Tables, fail


def check_ids(ids: np.ndarray, path: str) -> None:
    """Nonzero and unique, as ``CheckValid``."""
    zero = np.flatnonzero(ids == 0)
    if zero.size:
        raise fail("id 0 is reserved", f"{path} -> {int(zero[0])} -> id")
    if ids.size:
        order = np.argsort(ids, kind="stable")
        same = np.flatnonzero(ids[order][1:] == ids[order][:-1])
        if same.size:
            raise fail(f"id {int(ids[order][same[0]])} used twice",
                       f"{path} -> {int(order[same[0] + 1])} -> id")


def check_strings(indices: np.ndarray, num_strings: int, path: str) -> None:
    """Every index inside the string table (pprof: "malformed profile format")."""
    bad = np.flatnonzero((indices < 0) | (indices >= num_strings))
    if bad.size:
        raise fail(f"string index {int(indices[bad[0]])} outside the string table of "
                   f"{num_strings}", path.format(int(bad[0])))


def resolve(ids: np.ndarray, table_ids: np.ndarray, path: str, *,
            zero_is_none: bool, missing_is_none: bool = False) -> np.ndarray:
    """Rows of *table_ids* named by *ids* (-1 for 0 if *zero_is_none*)."""
    order = np.argsort(table_ids, kind="stable")
    sorted_ids = table_ids[order]
    at = np.searchsorted(sorted_ids, ids)
    at_c = np.minimum(at, max(sorted_ids.size - 1, 0))
    found = (at < sorted_ids.size) & (sorted_ids[at_c] == ids) if sorted_ids.size else (
        np.zeros(ids.size, bool))
    rows = np.where(found, order[at_c] if order.size else 0, -1)
    missing = ~found
    if zero_is_none:
        missing &= ids != 0
    if missing.any() and not missing_is_none:
        i = int(np.flatnonzero(missing)[0])
        raise fail(f"id {int(ids[i])} names no entry", path.format(i))
    return rows.astype(np.int64)


def check_tables(tables: Tables) -> None:
    """The checks that need only the tables (strings, ids, string indices, ranges)."""
    strings = tables.strings
    n = len(strings)
    if n == 0 or strings.raw(0) != b"":
        raise fail("string_table[0] must be ''", "Profile -> string_table -> 0")
    check_ids(tables.mappings["id"], "Profile -> mapping")
    check_ids(tables.locations["id"], "Profile -> location")
    check_ids(tables.functions["id"], "Profile -> function")
    for table, message, names in (
        (tables.mappings, "mapping", ("filename", "build_id")),
        (tables.functions, "function", ("name", "system_name", "filename")),
    ):
        for name in names:
            check_strings(table[name], n, f"Profile -> {message} -> {{}} -> {name}")
    m = tables.mappings
    bad = np.flatnonzero(m["memory_start"] > m["memory_limit"])
    if bad.size:
        raise fail("memory_start is above memory_limit",
                   f"Profile -> mapping -> {int(bad[0])} -> memory_limit")
    head = tables.head
    scalars = [head.drop_frames, head.keep_frames, head.default_sample_type, head.doc_url,
               *(head.period_type or ()), *head.comment]
    scalars += [v for st in head.sample_type for v in (st.type, st.unit)]
    check_strings(np.asarray(scalars, np.int64), n, "Profile -> string index {}")

