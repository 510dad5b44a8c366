"""One thread's stack, frame, function and resource tables, built as CPython's
``GeckoCollector`` builds them: in order of first appearance, walking each new stack from
the root.

The walk is over distinct stacks only (in order of their first sample), and within them
over the prefix-tree nodes not walked before, so its cost is the number of distinct nodes,
not of samples times depth.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

CATEGORY_PYTHON, CATEGORY_NATIVE = 1, 2
RESOURCE_TYPE_LIBRARY = 1


def is_python(filename: str) -> bool:
    """CPython's ``_is_python``: not a ``<...>`` pseudo-file, except ``<stdin>``/``<string>``."""
    return not filename.startswith("<") or filename in ("<stdin>", "<string>")


@dataclass
class FrameRows:
    """The profile's frame columns as Python lists (the walk reads them one by one)."""

    filename: list[str]
    funcname: list[str]
    lineno: list[int]
    column: list[int]


@dataclass
class ThreadTables:
    """The tables of one thread, as lists; strings are interned through *intern*, a callback
    ``(text, sample_index) -> None`` that records when a string is first needed (the string
    table is numbered later, once every thread's order is known)."""

    rows: FrameRows
    stack_frame: list[int] = field(default_factory=list)
    stack_prefix: list[int | None] = field(default_factory=list)
    stack_category: list[int] = field(default_factory=list)
    frame_func: list[int] = field(default_factory=list)
    frame_category: list[int] = field(default_factory=list)
    frame_line: list[int | None] = field(default_factory=list)
    frame_column: list[int | None] = field(default_factory=list)
    func_name: list[str] = field(default_factory=list)
    func_python: list[bool] = field(default_factory=list)
    func_resource: list[int] = field(default_factory=list)
    func_file: list[str | None] = field(default_factory=list)
    func_line: list[int | None] = field(default_factory=list)
    resource_name: list[str] = field(default_factory=list)
    node_of: dict[int, int] = field(default_factory=dict)
    _stacks: dict[tuple, int] = field(default_factory=dict)
    _frames: dict[tuple, int] = field(default_factory=dict)
    _funcs: dict[tuple, int] = field(default_factory=dict)
    _resources: dict[str, int] = field(default_factory=dict)
    _frame_of_row: dict[int, int] = field(default_factory=dict)

    def add_stack(self, node: int, frame: list[int], parent: list[int], intern,
                  sample: int) -> int:
        """The stack-table index of the prefix-tree *node* (first seen at global sample
        index *sample*), creating the entries CPython creates for it."""
        chain = []
        while node != -1 and node not in self.node_of:
            chain.append(node)
            node = parent[node]
        prefix = None if node == -1 else self.node_of[node]
        for walked in reversed(chain):
            row = frame[walked]
            frame_index = self._frame(row, intern, sample)
            key = (frame_index, prefix)
            found = self._stacks.get(key)
            if found is None:
                found = self._stacks[key] = len(self.stack_frame)
                self.stack_frame.append(frame_index)
                self.stack_prefix.append(prefix)
                self.stack_category.append(CATEGORY_PYTHON if is_python(
                    self.rows.filename[row]) else CATEGORY_NATIVE)
            self.node_of[walked] = prefix = found
        return prefix  # type: ignore[return-value]

    def _frame(self, row: int, intern, sample: int) -> int:
        found = self._frame_of_row.get(row)
        if found is not None:
            return found
        rows = self.rows
        lineno = None if rows.lineno[row] == -1 else rows.lineno[row]  # -1: no location
        column = rows.column[row] if lineno is not None and rows.column[row] >= 0 else None
        func = self._func(rows.filename[row], rows.funcname[row], lineno, intern, sample)
        key = (func, lineno, column)
        found = self._frames.get(key)
        if found is None:
            found = self._frames[key] = len(self.frame_func)
            self.frame_func.append(func)
            self.frame_category.append(CATEGORY_PYTHON if self.func_python[func]
                                       else CATEGORY_NATIVE)
            self.frame_line.append(lineno if lineno else None)
            self.frame_column.append(column)
        self._frame_of_row[row] = found
        return found

    def _func(self, filename: str, funcname: str, lineno: int | None, intern,
              sample: int) -> int:
        key = (filename, funcname)
        found = self._funcs.get(key)
        if found is not None:
            return found
        found = self._funcs[key] = len(self.func_name)
        intern(funcname, sample)
        python = is_python(filename)
        base = posixpath.basename(filename)
        resource = self._resources.get(filename)
        if resource is None:
            resource = self._resources[filename] = len(self.resource_name)
            intern(base, sample)
            self.resource_name.append(base)
        self.func_name.append(funcname)
        self.func_python.append(python)
        self.func_resource.append(resource)
        if python:
            intern(base, sample)
        self.func_file.append(base if python else None)
        self.func_line.append(lineno if python else None)
        return found

    def to_json(self, index: dict[str, int]) -> dict[str, Any]:
        """The four tables and the (empty) native symbols, keys in CPython's order, with
        strings as indexes into the shared string array *index*."""
        n_stacks, n_frames = len(self.stack_frame), len(self.frame_func)
        n_funcs, n_resources = len(self.func_name), len(self.resource_name)
        return {
            "stackTable": {"frame": self.stack_frame, "category": self.stack_category,
                           "subcategory": [0] * n_stacks, "prefix": self.stack_prefix,
                           "length": n_stacks},
            "frameTable": {"address": [-1] * n_frames, "category": self.frame_category,
                           "subcategory": [0] * n_frames, "func": self.frame_func,
                           "innerWindowID": [None] * n_frames,
                           "implementation": [None] * n_frames,
                           "optimizations": [None] * n_frames, "line": self.frame_line,
                           "column": self.frame_column, "inlineDepth": [0] * n_frames,
                           "nativeSymbol": [None] * n_frames, "length": n_frames},
            "funcTable": {"name": [index[s] for s in self.func_name],
                          "isJS": self.func_python, "relevantForJS": self.func_python,
                          "resource": self.func_resource,
                          "fileName": [None if s is None else index[s] for s in self.func_file],
                          "lineNumber": self.func_line, "columnNumber": [None] * n_funcs,
                          "length": n_funcs},
            "resourceTable": {"lib": [None] * n_resources,
                              "name": [index[s] for s in self.resource_name],
                              "host": [None] * n_resources,
                              "type": [RESOURCE_TYPE_LIBRARY] * n_resources,
                              "length": n_resources},
            "nativeSymbols": {"libIndex": [], "address": [], "name": [], "functionSize": [],
                              "length": 0},
        }
