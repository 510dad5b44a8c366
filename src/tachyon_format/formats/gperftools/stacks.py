"""From records of pcs to samples of locations, with every rule pprof applies on the way.

pprof (``profile/legacy_profile.go``: ``parseCPUSamples``, ``cpuProfile``,
``cleanupDuplicateLocations``, ``remapLocationIDs``) turns the records of a C++ profile into
samples this way, and the location ids and sample stacks of its ``Profile`` depend on each
step:

1. every pc but the first of a record (a return address) is lowered by 1, onto its call;
2. a location per distinct address, in order of first appearance;
3. the "signal frames": when at least ``n - n // 32`` of the ``n`` samples share their
   second location, it is cut from them, for up to two rounds (old libprofilers recorded
   the signal handler's frames there; a modern one does not, and then real callers common
   to nearly all samples are cut instead, as pprof cuts them);
4. locations are renumbered by first appearance in what is left;
5. a sample's second location is cut when its address is the leaf's minus 1 (the leaf
   recorded twice, once adjusted).

Vectorised (tier c): a step only ever cuts locations right after a sample's first, so a
sample is its first location, a count of cut ones, then the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels.segments import decode_ragged_ranges
from tachyon_format.schema import gperftools as spec


@dataclass(frozen=True)
class Located:
    """Samples over a table of locations: ``addresses`` (one per location, pprof's order),
    and the samples in CSR form, ``locations[offsets[i]:offsets[i + 1]]`` leaf first;
    ``dropped``: addresses cut as signal frames; ``duplicates``: samples cut by step 5."""

    addresses: npt.NDArray[np.uint64]
    offsets: npt.NDArray[np.int64]
    locations: npt.NDArray[np.int64]
    dropped: tuple[int, ...] = ()
    duplicates: int = 0


def adjust_return_addresses(offsets: npt.NDArray[np.int64],
                            pcs: npt.NDArray[np.uint64], delta: int) -> npt.NDArray[np.uint64]:
    """*pcs* with *delta* (-1 reading, +1 writing) added to every pc but each record's
    first, mod 2**64 as Go's uint64."""
    out = pcs.copy()
    lengths = np.diff(offsets)
    nonleaf = np.ones(out.size, bool)
    nonleaf[offsets[:-1][lengths > 0]] = False
    if delta < 0:
        out[nonleaf] -= np.uint64(-delta)
    else:
        out[nonleaf] += np.uint64(delta)
    return out


def first_appearance(keys: npt.NDArray) -> tuple[npt.NDArray, npt.NDArray[np.int64]]:
    """Vectorised: the distinct *keys* in order of first appearance, and each key's row."""
    distinct, _, rows = first_appearance_with_index(keys)
    return distinct, rows


def first_appearance_with_index(
    keys: npt.NDArray,
) -> tuple[npt.NDArray, npt.NDArray[np.intp], npt.NDArray[np.int64]]:
    """:func:`first_appearance`, and where each distinct key first appears. One unstable
    sort (the first position of each key is a minimum over its group, so stability is not
    needed)."""
    if not keys.size:
        return keys[:0], np.zeros(0, np.intp), np.zeros(0, np.int64)
    order = np.argsort(keys)
    ordered = keys[order]
    head = np.empty(keys.size, bool)
    head[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=head[1:])
    starts = np.flatnonzero(head)
    first = np.minimum.reduceat(order, starts)
    group = np.cumsum(head) - 1
    by_first = np.argsort(first, kind="stable")
    rank = np.empty(starts.size, np.int64)
    rank[by_first] = np.arange(starts.size)
    rows = np.empty(keys.size, np.int64)
    rows[order] = rank[group]
    return ordered[starts][by_first], first[by_first], rows


def cpp_samples(offsets: npt.NDArray[np.int64], pcs: npt.NDArray[np.uint64], *,
                drop_signal_frames: bool = True) -> Located:
    """Steps 1 to 5 for the records ``pcs[offsets[i]:offsets[i + 1]]``."""
    addresses, locations = first_appearance(adjust_return_addresses(offsets, pcs, -1))
    cut = np.zeros(offsets.size - 1, np.int64)
    dropped: tuple[int, ...] = ()
    if drop_signal_frames:
        cut, dropped_rows = signal_frame_cuts(offsets, locations)
        dropped = tuple(int(a) for a in addresses[dropped_rows])
    kept = _without_cuts(offsets, locations, cut)
    kept_offsets = offsets - np.concatenate([[0], np.cumsum(cut)])
    rows_left, renumbered = _renumber(kept, addresses.size)
    addresses_left = addresses[rows_left]
    final = addresses_left[renumbered]
    lengths = np.diff(kept_offsets)
    rows = np.flatnonzero(lengths > 1)
    leaf, second = final[kept_offsets[rows]], final[kept_offsets[rows] + 1]
    duplicate = rows[leaf == second + np.uint64(1)]
    cut2 = np.zeros(lengths.size, np.int64)
    cut2[duplicate] = 1
    locations_out = _without_cuts(kept_offsets, renumbered, cut2)
    offsets_out = kept_offsets - np.concatenate([[0], np.cumsum(cut2)])
    return Located(addresses_left, offsets_out, locations_out, dropped, int(duplicate.size))


def _renumber(rows: npt.NDArray[np.int64], n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`first_appearance` for rows below *n*, without a sort: the rows left in order
    of first appearance, and each one's new number."""
    first = np.full(n, rows.size, np.int64)
    np.minimum.at(first, rows, np.arange(rows.size))
    present = np.flatnonzero(first < rows.size)
    order = present[np.argsort(first[present], kind="stable")]
    new = np.full(n, -1, np.int64)
    new[order] = np.arange(order.size)
    return order, new[rows]


def signal_frame_cuts(offsets: npt.NDArray[np.int64], locations: npt.NDArray[np.int64],
                      rounds: int = spec.SIGNAL_FRAME_ROUNDS
                      ) -> tuple[npt.NDArray[np.int64], list[int]]:
    """Step 3: how many locations right after its first each sample loses, and the rows of
    the locations cut (in the order they were found)."""
    n = offsets.size - 1
    cut = np.zeros(n, np.int64)
    length = np.diff(offsets)
    found: list[int] = []
    threshold = n - n // spec.SIGNAL_FRAME_SLACK
    for _ in range(rounds):
        deep = np.flatnonzero(length - cut > 1)
        if not deep.size:
            continue
        second = locations[offsets[deep] + 1 + cut[deep]]
        tally = np.bincount(second)
        common = np.flatnonzero(tally >= threshold)
        if not common.size:
            continue  # (pprof goes on to the next round, which finds the same)
        row = int(common[0])  # at most one can reach the threshold
        cut[deep[second == row]] += 1
        found.append(row)
    return cut, found


def _without_cuts(offsets: npt.NDArray[np.int64], flat: npt.NDArray,
                  cut: npt.NDArray[np.int64]) -> npt.NDArray:
    if not cut.any():
        return flat
    keep = np.ones(flat.size, bool)
    keep[decode_ragged_ranges(offsets[:-1] + 1, cut)] = False
    return flat[keep]
