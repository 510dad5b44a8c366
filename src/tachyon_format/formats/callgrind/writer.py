"""Write a :class:`~tachyon_format.model.Profile` as a callgrind file.

The costs come from :mod:`.costs` (per distinct stack, function, line and call); this module
only renders them, per function (sorted by file, then name):

    fl=(1) app.py            file and function names compressed: "(id) name" the first
    fn=(1) work              time, "(id)" after (callgrind's name compression)
    12 40 80000000           self cost at line 12: samples, then time
    cfl=(1)
    cfn=(2) helper
    calls=25 30              25 samples made the call; helper's first line is 30
    14 25 50000000           the call from line 14 and its inclusive cost

Format: https://valgrind.org/docs/manual/cl-format.html (Valgrind 3.19).
"""

from __future__ import annotations

import numpy as np

from tachyon_format.model import Profile

from ..sources import whole_file_writer
from . import MAGIC
from .costs import Costs, compute

CREATOR = "tachyon-format"


def dumps(profile: Profile, *, command: str | None = None) -> bytes:
    """The file's bytes (UTF-8 text). *command* fills the ``cmd:`` header line
    (KCachegrind's title); by default there is none."""
    costs = compute(profile)
    lines = [MAGIC.decode(), "version: 1", f"creator: {CREATOR}"]
    if command:
        lines.append(f"cmd: {_one_line(command)}")
    lines.append("positions: line")
    lines.extend(f"event: {e.name} : {e.description}" for e in costs.events)
    lines.append("events: " + " ".join(e.name for e in costs.events))
    lines.append("summary: " + _numbers(costs.total.tolist()))
    lines.extend(_body(costs))
    lines.append("totals: " + _numbers(costs.total.tolist()))
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")


def _body(costs: Costs):
    """The function blocks: self lines, then calls; once per distinct row of each."""
    files, names = costs.files, costs.names
    files_named: dict[str, int] = {}
    functions_named: dict[int, int] = {}

    def file_ref(f: int) -> str:
        text = files[f]
        if text in files_named:
            return f"({files_named[text]})"
        files_named[text] = len(files_named) + 1
        return f"({files_named[text]}) {text}"

    def function_ref(f: int) -> str:
        if f in functions_named:
            return f"({functions_named[f]})"
        functions_named[f] = len(functions_named) + 1
        return f"({functions_named[f]}) {names[f]}"

    self_rows = _rows_of(costs.self_function, len(names))
    call_rows = _rows_of(costs.caller, len(names))
    self_line, self_cost = costs.self_line.tolist(), costs.self_cost.tolist()
    callee, call_line = costs.callee.tolist(), costs.call_line.tolist()
    calls, call_cost = costs.calls.tolist(), costs.call_cost.tolist()
    first_line = costs.first_line.tolist()
    current_file = None
    for f in sorted(range(len(names)), key=lambda f: (files[f], names[f])):
        if not self_rows[f] and not call_rows[f]:
            continue
        if files[f] != current_file:
            yield f"fl={file_ref(f)}"
            current_file = files[f]
        yield f"fn={function_ref(f)}"
        for r in self_rows[f]:
            yield f"{self_line[r]} {_numbers(self_cost[r])}"
        for r in call_rows[f]:
            g = callee[r]
            yield f"cfl={file_ref(g)}"
            yield f"cfn={function_ref(g)}"
            yield f"calls={calls[r]} {first_line[g]}"
            yield f"{call_line[r]} {_numbers(call_cost[r])}"


def _rows_of(function: np.ndarray, n: int) -> list[list[int]]:
    """Per function, the rows (already sorted by function, then line) that belong to it."""
    bounds = np.searchsorted(function, np.arange(n + 1))
    rows = np.arange(function.size).tolist()
    starts = bounds.tolist()
    return [rows[starts[f]:starts[f + 1]] for f in range(n)]


def _numbers(values) -> str:
    return " ".join(str(v) for v in values)


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


write = whole_file_writer(dumps)
