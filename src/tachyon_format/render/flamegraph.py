"""Flame graphs of a profile: an interactive self-contained HTML page, a static SVG, and the
difference of two profiles.

The page holds the function-merged call tree (:mod:`.calltree`) as flat arrays — per node
its parent, function and self weight; per function its name, file and line as rows of one
string list — not one JSON object per node: a node costs about 12 bytes of page, so a
profile of 60,000 distinct stacks stays a few megabytes. A small hand-written script
(``assets/flamegraph.js``; no library, so the page needs no network and one JSON object per
node is never built) lays the tree out in one pass and draws a box per node of at least half a
pixel: click to zoom, a search box (regular expression over names and files) highlighting
matches with their share of the samples, and tooltips with total and self weight, percent
and file:line.
"""

from __future__ import annotations

import html
import os

import numpy as np

from tachyon_format.model import Profile

from .calltree import CallTree, call_tree
from .page import page, write_text


def flamegraph(profile: Profile, path: str | os.PathLike, *, title: str | None = None,
               sample_type: str | None = None, icicle: bool = False,
               profiler_frames: bool = False) -> None:
    """Write the flame graph of *profile* to *path* as one HTML page (no network needed).

    Weights are samples (:meth:`Profile.sample_counts`), or *sample_type*'s values. The
    root is at the bottom, or at the top with *icicle*. The profiler's own frames are left
    out, as CPython's flame graph leaves them out, unless *profiler_frames*."""
    tree = call_tree(profile, sample_type, profiler_frames=profiler_frames)
    data = tree_data(tree, unit=_unit(profile, sample_type), icicle=icicle)
    _write_page(path, title or "Flame graph", data)


def flamegraph_diff(profile: Profile, baseline: Profile, path: str | os.PathLike, *,
                    title: str | None = None, sample_type: str | None = None,
                    icicle: bool = False, profiler_frames: bool = False) -> None:
    """Write the flame graph of *profile* coloured by its change from *baseline*: each node's
    total is compared with the same call path's in *baseline*, scaled by the ratio of the two
    profiles' totals (red: a larger share now, blue: smaller). Paths only in *baseline* are
    not drawn."""
    tree = call_tree(profile, sample_type, profiler_frames=profiler_frames)
    before = call_tree(baseline, sample_type, profiler_frames=profiler_frames)
    data = tree_data(tree, unit=_unit(profile, sample_type), icicle=icicle)
    scale = float(tree.total[0]) / float(before.total[0]) if before.total[0] else 0.0
    data["base"] = [round(v, 2) for v in (baseline_totals(tree, before) * scale).tolist()]
    _write_page(path, title or "Differential flame graph", data)


def tree_data(tree: CallTree, *, unit: str = "samples", icicle: bool = False) -> dict:
    """What the page reads: the tree and its functions as flat lists."""
    return {
        "unit": unit,
        "icicle": icicle,
        "texts": tree.texts,
        "fname": tree.functions.name.tolist(),
        "ffile": tree.functions.file.tolist(),
        "fline": tree.functions.line.tolist(),
        "parent": tree.parent.tolist(),
        "func": tree.function.tolist(),
        "self": tree.self_weight.tolist(),
    }


def baseline_totals(tree: CallTree, baseline: CallTree) -> np.ndarray:
    """Per node of *tree*: the total of the same (file, function) path in *baseline*, 0 when
    it has none. Matched one depth at a time through sorted (parent, function) keys."""
    key_of = {}
    for row, (name, file) in enumerate(zip(tree.functions.name.tolist(),
                                           tree.functions.file.tolist(), strict=True)):
        key_of[(tree.texts[name], tree.texts[file])] = row
    function_map = np.array([key_of.get((baseline.texts[name], baseline.texts[file]), -1)
                             for name, file in zip(baseline.functions.name.tolist(),
                                                   baseline.functions.file.tolist(),
                                                   strict=True)], np.int64)
    width = max(tree.functions.name.size, 1)
    keys = tree.parent.astype(np.int64) * width + tree.function.astype(np.int64)
    order = np.argsort(keys[1:], kind="stable") + 1
    sorted_keys = keys[order]
    mapped = np.full(len(baseline), -1, np.int64)
    mapped[0] = 0
    out = np.zeros(len(tree), np.float64)
    out[0] = baseline.total[0]
    cuts = np.flatnonzero(np.diff(baseline.depth[1:])) + 1
    for level in np.split(np.arange(1, len(baseline)), cuts):
        if not level.size:
            continue
        parent = mapped[baseline.parent[level].astype(np.int64)]
        function = function_map[baseline.function[level].astype(np.int64)] \
            if function_map.size else np.full(level.size, -1)
        ok = (parent >= 0) & (function >= 0)
        wanted = parent * width + function
        at = np.minimum(np.searchsorted(sorted_keys, wanted), max(sorted_keys.size - 1, 0))
        found = ok & (sorted_keys.size > 0) & (sorted_keys[at] == wanted) if sorted_keys.size \
            else np.zeros(level.size, bool)
        mapped[level[found]] = order[at[found]]
        out[order[at[found]]] = baseline.total[level[found]]
    return out


def flamegraph_svg(profile: Profile, path: str | os.PathLike, *, title: str | None = None,
                   sample_type: str | None = None, width: int = 1200,
                   min_width: float = 0.1, profiler_frames: bool = False) -> None:
    """Write the flame graph of *profile* to *path* as a static SVG (root at the bottom, a
    ``<title>`` tooltip per box, names where they fit); boxes narrower than *min_width*
    pixels are left out."""
    tree = call_tree(profile, sample_type, profiler_frames=profiler_frames)
    unit = _unit(profile, sample_type)
    x = tree.offsets()
    total = max(int(tree.total[0]), 1)
    scale = (width - 20) / total
    visible = np.flatnonzero(tree.total * scale >= min_width)
    row, top = 17, 40
    max_depth = int(tree.depth[visible].max()) if visible.size else 0
    height = top + (max_depth + 1) * row + 10
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">',
        '<rect width="100%" height="100%" fill="#fafafa"/>',
        f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="16" '
        f'font-family="sans-serif">{html.escape(title or "Flame graph")}</text>',
    ]
    for node in visible.tolist():
        name = tree.name(node)
        left = 10 + x[node] * scale
        box = tree.total[node] * scale
        y = top + (max_depth - int(tree.depth[node])) * row
        where = tree.file(node) + (f":{tree.line(node)}" if tree.line(node) >= 0 else "")
        tip = (f"{name} {where}\ntotal {tree.total[node]} {unit} "
               f"({100 * tree.total[node] / total:.2f}%), self {tree.self_weight[node]}")
        parts.append(f'<g><title>{html.escape(tip)}</title><rect x="{left:.2f}" y="{y}" '
                     f'width="{box:.2f}" height="{row - 1}" fill="{_warm(name)}"/>')
        fits = int((box - 6) // 7)
        if fits >= 3:
            label = name if len(name) <= fits else name[: fits - 2] + ".."
            parts.append(f'<text x="{left + 3:.2f}" y="{y + 12}">{html.escape(label)}</text>')
        parts.append("</g>")
    parts.append("</svg>\n")
    write_text(path, "\n".join(parts))


def _warm(name: str) -> str:
    """A warm colour per name (the page's colouring, FNV-1a like common.js)."""
    h = 2166136261
    for char in name:
        h = ((h ^ ord(char)) * 16777619) & 0xFFFFFFFF
    return f"hsl({h % 50 + 5},{70 + (h >> 8) % 25}%,{58 + (h >> 16) % 14}%)"


def _unit(profile: Profile, sample_type: str | None) -> str:
    if sample_type is None:
        return "samples"
    return profile.meta.sample_types[profile.meta.sample_type_index(sample_type)].unit


def _write_page(path: str | os.PathLike, title: str, data: dict) -> None:
    from string import Template

    from .page import asset

    body = Template(asset("flamegraph.html")).substitute(title=html.escape(title))
    write_text(path, page(title=title, kind="flamegraph", css=["common.css", "flamegraph.css"],
                          body=body, data=data, scripts=["common.js", "flamegraph.js"]))
