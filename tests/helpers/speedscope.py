"""speedscope (the npm package) as a test oracle, and the totals it shows, computed from a
:class:`~tachyon_format.Profile` one sample at a time (a scalar model of what it shows).

``tools/dev.sh test`` installs the package into ``~/.cache/tachyon-format/npm``
(``$TACHYON_NPM_PREFIX`` overrides it); ``speedscope_import.js`` runs the bundled app's own
``importProfileGroupFromText`` under Node. Tests that need it skip, with the reason, when
Node or the package is absent.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from pathlib import Path

import numpy as np

from .npm import npm_package, require, run_node_lines

SCRIPT = Path(__file__).with_name("speedscope_import.js")
SPEEDSCOPE_VERSION = "1.25.0"


@functools.cache
def speedscope_bundle() -> tuple[str, Path] | str:
    """(node, the app's script) or the reason there is none."""
    found = npm_package("speedscope", SPEEDSCOPE_VERSION)
    if isinstance(found, str):
        return found
    node, package = found
    bundles = sorted((package / "dist" / "release").glob("speedscope-*.js"))
    if not bundles:
        return "speedscope's package has no dist/release/speedscope-*.js"
    return node, bundles[0]


def speedscope_import(*paths: Path | str) -> list[dict]:
    """speedscope's import of each file (see ``speedscope_import.js``); skips without it."""
    node, bundle = require(speedscope_bundle())
    return run_node_lines(node, SCRIPT, str(bundle), *map(str, paths))


def frame_totals(shown: dict) -> dict[str, dict[tuple, tuple[float, float]]]:
    """Per profile name: frame (name, file, line, col) -> (self, total), as speedscope shows."""
    out = {}
    for p in shown["profiles"]:
        out[p["name"]] = {(f["name"], f["file"], f["line"], f["col"]): (f["self"], f["total"])
                          for f in p["frames"]}
    return out


def model_totals(profile, names, weights=None) -> dict[str, dict[tuple, tuple[int, int]]]:
    """The same from *profile*, one sample at a time: per thread (named by *names*, one per
    thread row), per frame key, the weight of the samples where the frame is the leaf
    (self) and where it is anywhere on the stack, counted once (total)."""
    texts = profile.strings.texts()
    frames = profile.frames
    weights = profile.weights() if weights is None else weights
    tuples = profile.stacks.tuples()

    def key(row):
        name = texts[frames.funcname[row]]
        if not name:
            address = 0 if frames.address is None else int(frames.address[row])
            name = f"0x{address:x}" if address else "?"
        file = texts[frames.filename[row]]
        mapping = -1 if frames.mapping is None else int(frames.mapping[row])
        if not file and mapping >= 0:
            file = texts[profile.mappings.filename[mapping]]
        line = int(frames.lineno[row]) if frames.lineno[row] >= 0 else None
        col = int(frames.column[row]) + 1 if frames.column[row] >= 0 else None
        return name, file or None, line, col

    out: dict[str, dict] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for thread, stack, w in zip(profile.samples.thread.tolist(),
                                profile.samples.stack.tolist(), weights.tolist(), strict=True):
        keys = [key(row) for row in tuples[stack]]
        table = out[names[thread]]
        if keys:
            table[keys[0]][0] += w
        for k in set(keys):
            table[k][1] += w
    return {name: {k: tuple(v) for k, v in table.items()} for name, table in out.items()}


def evented_durations(profile, interval_us: int, gap_factor: int = 2):
    """Per sample, how long the evented writer keeps it open (its documented rule, one sample
    at a time): until the thread's next sample when that comes within *gap_factor*
    intervals, else for one interval."""
    ts = profile.samples.timestamp_us.tolist()
    threads = profile.samples.thread.tolist()
    order = sorted(range(len(ts)), key=lambda i: (threads[i], ts[i]))
    out = np.zeros(len(ts), np.int64)
    for k, here in enumerate(order):
        there = order[k + 1] if k + 1 < len(order) else None
        gap = ts[there] - ts[here] if there is not None and threads[there] == threads[here] \
            else None
        out[here] = gap if gap is not None and gap <= gap_factor * interval_us else interval_us
    return out
