"""CPython 3.15's flame graph tree (``replay --flamegraph``'s data) as a test oracle: its
``FlamegraphCollector`` fed by its own reader, run under the reference interpreter, with
nothing pruned (the page leaves out nodes under 0.1% of the samples)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers.reference import run_reference

# Runs under the reference interpreter: a JSON list of input paths on stdin; prints, per
# input, the collector's tree (names resolved) as JSON.
_TREE = """
import contextlib, io, json, sys
from profiling.sampling.binary_reader import BinaryReader
from profiling.sampling.cli import _create_collector

sys.setrecursionlimit(100000)

def resolve(node, strings):
    return {"file": strings[node["filename"]] if "filename" in node else "",
            "name": strings[node["funcname"]] if "funcname" in node else "",
            "value": node["value"], "self": node.get("self", 0),
            "children": [resolve(c, strings) for c in node.get("children", [])]}

out = []
for source in json.load(sys.stdin):
    with BinaryReader(source) as reader, contextlib.redirect_stdout(io.StringIO()):
        info = reader.get_info()
        collector = _create_collector("flamegraph", info["sample_interval_us"],
                                      skip_idle=False, mode=info.get("mode"))
        reader.replay_samples(collector)
        data = collector._convert_to_flamegraph_format(min_samples=1)  # nothing pruned
    out.append(resolve(data, data["strings"]))
print(json.dumps(out))
"""


def cpython_trees(sources: list[Path]) -> list[dict]:
    """CPython's flame graph tree of each Tachyon file in *sources* (one process for all)."""
    printed = run_reference(_TREE, input=json.dumps([os.fspath(s) for s in sources])).stdout
    return json.loads(printed)


def function_paths(tree: dict) -> dict[tuple[tuple[str, str], ...], list[int]]:
    """``path of (file, function) -> [total, self]``, the nodes of one path (CPython keeps the
    line in a node's key) summed."""
    out: dict[tuple[tuple[str, str], ...], list[int]] = {}
    # CPython shows a root with one child that holds every sample as that child
    todo = [((), tree)] if tree["name"] else [((), child) for child in tree["children"]]
    while todo:
        path, node = todo.pop()
        path = (*path, (node["file"], node["name"]))
        sums = out.setdefault(path, [0, 0])
        sums[0] += node["value"]
        sums[1] += node["self"]
        todo.extend((path, child) for child in node["children"])
    return out
